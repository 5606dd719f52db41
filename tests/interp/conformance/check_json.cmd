check --json
