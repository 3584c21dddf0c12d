"""GitHub through the user's own `gh` CLI: pull requests, review threads, replies (standard library only).

Every call runs `gh` with an argument list (never a shell), a timeout, prompts disabled and the user's own
gh configuration and environment. The GraphQL texts the engine sends live in `queries`.
"""
