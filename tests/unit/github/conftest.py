from helpers_github import gh_env, github, pr_checkout  # noqa: F401 -- fixtures
