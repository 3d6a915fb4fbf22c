"""`python -m flows.cli`."""

from flows.cli import main

if __name__ == "__main__":
    main()
