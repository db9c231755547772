"""Python parsers generated from kaitai/*.ksy by kaitai/build.mjs: do not edit.

Regenerate with `node kaitai/build.mjs`; CI runs `node kaitai/build.mjs --check`.
"""
