"""Publishing a review run on its pull request: the plan (what is new, fixed, dismissed), the summary and
the check, and the run that reads the pull request and writes to it through the github layer."""
