"""Findings: memories that should not be there (rules, corpus rules, the scan)."""
