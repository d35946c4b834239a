"""Shared vocabulary of every layer: configuration, ids, errors (and, later, types and rows).

May import only the standard library and third-party packages; never another flintlock package.
"""
