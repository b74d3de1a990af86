"""What the dashboard does to the stores: approve, edit, move, forget, purge, export.

No Flask here: each action takes store references and plain values, plans with
the engine and ``contract``, and writes through ``store``; the views turn
requests into calls and answers into pages.
"""
