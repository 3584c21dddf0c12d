"""Dependency cycles among tasks, found and described."""

from __future__ import annotations


def dependency_cycles(graph: dict[int, set[int]]) -> list[list[int]]:
    """The cycles of a dependency graph (id -> ids it depends on): strongly connected groups of two or more
    tasks, or a task that depends on itself; each sorted, in order of their smallest id.

    Tarjan's algorithm, without recursion: a chain of thousands of tasks must not hit the recursion limit.
    """
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    stack: list[int] = []
    on_stack: set[int] = set()
    groups: list[list[int]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            successor = next((s for s in successors if s in graph), None)
            if successor is not None and successor not in index:
                index[successor] = low[successor] = len(index)
                stack.append(successor)
                on_stack.add(successor)
                work.append((successor, iter(sorted(graph[successor]))))
            elif successor is not None:
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1 or node in graph[node]:
                        groups.append(sorted(group))
    return sorted(groups)


def describe_cycle(cycle: list[int]) -> str:
    if len(cycle) == 1:
        return f"task {cycle[0]} depends on itself"
    names = ", ".join(str(task_id) for task_id in cycle[:-1]) + f" and {cycle[-1]}"
    return f"tasks {names} depend on each other in a cycle"
