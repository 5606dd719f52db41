check --library
