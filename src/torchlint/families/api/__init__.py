"""The API family: rewriting calls of deprecated or unsafe torch APIs."""
