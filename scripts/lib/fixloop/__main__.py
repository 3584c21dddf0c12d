from fixloop.core.broken_env import fail_broken, fail_internal, is_dependency_failure

try:
    from fixloop.cli import main
except ImportError as error:  # click (or what it needs) is missing or corrupt, or fixloop's own code is
    if is_dependency_failure(error):
        fail_broken(error)
    fail_internal(error)

main()
