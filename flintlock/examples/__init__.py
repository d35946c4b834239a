"""Example jobs shipped with flintlock; ``make run`` runs ``word_count``."""
