"""The words every agent's answer contract opens with (contracts.prompt_text renders them): the hooks find
where a task's contract starts by them (hookside.task_delivery). Standard library only."""

CONTRACT_OPENING = "Your final message is ONLY one JSON object"
