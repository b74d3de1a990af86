"""Who may connect, and how hostile text is shown.

The credential (``access``, ``login``), the request checks (``security``:
Host, token, CSRF, headers), redirects that stay on this server
(``localurl``), waitress's own error pages (``waitress_errors``), and the
Jinja filters that show stored text as it is (``invisible``, ``textmarks``).
"""
