import sys

from .cli import program

if __name__ == "__main__":      # not when a Dask worker process imports it (spawn)
    sys.exit(program())
