"""The Docker backend: a warm locked-down container per worker, and the offline image build.

Imports nothing from the ``docker`` SDK until a sandbox is opened, so the package imports without it.
"""
