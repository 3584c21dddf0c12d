"""What a run reports: coordinator JSON, simple array, Markdown, SARIF, and log queries."""
