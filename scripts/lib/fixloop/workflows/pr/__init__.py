"""`/fixloop:fix-pr-review`: a pull request's review threads answered with fixes and replies, then reviewed.

The engine does every GitHub step (gh, through fixloop.github) and every git step; the agents only judge
(comment-classifier), fix (review-fixer) and write (reply-writer). What the run learns about the pull
request lives in the run state's `pr_review` object (workflows.pr.record).
"""
