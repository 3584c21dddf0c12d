import sys

from fixloop.core.broken_env import fail_broken, fail_internal, is_dependency_failure

try:
    from fixloop.workflows import hook_record

    # `record` as the hooks call it for every agent needs no click: it answers alone, the same way.
    arguments = hook_record.record_arguments(sys.argv[1:])
    if arguments is None:
        from fixloop.cli import main
except ImportError as error:  # click (or what it needs) is missing or corrupt, or fixloop's own code is
    if is_dependency_failure(error):
        fail_broken(error)
    fail_internal(error)

if arguments is not None:
    hook_record.main(arguments)
else:
    main()
