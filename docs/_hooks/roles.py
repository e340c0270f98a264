"""MkDocs hook: drop Sphinx roles (``:class:``, ``:func:`` ...) left in front of code spans.

The package's docstrings are plain text with reST-style ``literals`` and roles; rendered as
Markdown the literals become code spans, and this removes the role names before them.
"""

import re

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|data|attr|obj|exc|const):(?=<code>|`)")


def on_page_content(html, **kwargs):
    return _ROLE.sub("", html)
