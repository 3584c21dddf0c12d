"""The review-fix loop: a state machine over the run state's `review` object.

state        the review object as typed dictionaries, and their constructors
access       reading the run state: the review object, its rounds, config and run id
step         what a step works on (StepContext) and returns (Transition); the Effects it may use
machine      decide_next: advance the loop to its next action
record       recording an agent's answer
rounds       opening a round, asking the reviewers, closing a pass with merged issues
verifier     the review-verifier's step and the quality gate's re-reviews
convergence  resolved/introduced/persisting issues and the convergence rules
fix          the review-fixer's step
batches      the verifier's and the fixer's calls over at most max_findings_per_batch findings each
gate         the verification gate, and `fixloop verify` feeding it
questions    asking the user, choosing, rolling back
outcome      how the loop ends
views        what reports and `review status` read
prompts      the reviewers' task document and every agent prompt, in its action
identity     stable issue ids; policy: retry, quality and confidence decisions
runner, intake, effects, confidence: the engine behind the `fixloop review` and `fixloop policy` commands
"""
