"""Writes and executes the notebook the notebook-host browser tests open (hosts-notebook.test.mjs).

usage: /usr/bin/python3 make_host_notebook.py OUT.ipynb APP_URL LONG_TOKENS

Two cells, as a teacher would write them: an IFrame of the playground (IPython.display.IFrame,
no script needed), and the custom element with a long token list (a module script in an HTML
output: it runs only in a trusted notebook, on a page that loads RequireJS). Executed by the real
kernel through nbclient, so the outputs are what the notebook itself produced.
"""
import sys

import nbformat
from nbclient import NotebookClient


def main() -> None:
    out, app, tokens = sys.argv[1], sys.argv[2], sys.argv[3]
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Attention in a notebook"),
        nbformat.v4.new_code_cell(
            "from IPython.display import IFrame\n"
            f"IFrame({app + '/?embed=1#v=1'!r}, width='100%', height=700)"
        ),
        nbformat.v4.new_code_cell(
            "from IPython.display import HTML\n"
            f"HTML('<script type=\"module\" src=\"{app}/attention-playground.js\"></script>'\n"
            f"     '<attention-playground id=\"ap-element\" hash=\"#v=1&tokens={tokens}\" show=\"tokens\"></attention-playground>')"
        ),
    ]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    nbformat.write(nb, out)


if __name__ == "__main__":
    main()
