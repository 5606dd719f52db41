# supervisor/: see docs/HACKING.md
