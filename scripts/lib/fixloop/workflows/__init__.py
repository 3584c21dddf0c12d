"""Every workflow on one engine: `fixloop next` runs a workflow's phases and hands the model only agent
calls, questions and the end."""
