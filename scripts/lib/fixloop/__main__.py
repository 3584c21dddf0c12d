from fixloop.core.broken_env import fail_broken

try:
    from fixloop.cli import main
except ImportError as error:  # click (or what it needs) is missing or corrupt
    fail_broken(error)

main()
