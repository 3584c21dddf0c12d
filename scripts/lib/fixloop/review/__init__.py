"""The review-fix loop: a state machine over the run state's `review` object."""
