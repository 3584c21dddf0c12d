"""A workflow run's life: arguments, configuration, phases, start and end, git files, verification."""
