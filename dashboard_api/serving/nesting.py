"""How deep YAML and JSON text nests, read from the raw text before any parser sees it.

The parsers have nesting limits of their own (libyaml 0.2.6 refuses flow or block nesting past
1,000, ujson past 1,024), and libyaml's scanner reads ahead of the events bounded.py counts:
``[[[[...`` on one line reaches its limit before the 41st level is an event. So the project's
limits are checked here first, and the answer and its message are the project's whatever
version of a parser is installed.

yaml_depth returns a lower bound of the true depth (never more, so no valid document is
refused), exact for nested brackets (the single-pair mapping of ``[a: b]`` has none and is not
counted), and stops once past ``limit``. It follows the YAML
scanner's rules line by line: brackets count outside quoted scalars ('' and backslash escapes),
comments, block scalars (``|``, ``>`` and their indented lines) and plain scalars (``echo
a[b]``, and the lines a plain scalar goes on to); block collections count as the scanner opens
them (``-``, ``?``, ``:`` and keys, each at a column right of the last), so ``- - - x`` on one
line is three levels, and nesting by indentation one level a line. json_depth is exact for
valid JSON past ``limit`` (brackets outside strings).

Linear: each line is looked at once, through str methods and patterns without nested
repetition over the special characters only (tests/hostile/test_patterns.py).
"""

import itertools
import re

_NEVER = float("inf")

# A plain scalar in block context ends at ": " (or ":" at the end of a line) and at " #".
_BLOCK_PLAIN_END = re.compile(r":(?=[ \t]|$)|[ \t]#")
# In flow context also at a flow indicator, and ":" before one.
_FLOW_PLAIN_END = re.compile(r"[\[\]{},]|:(?=[ \t\[\]{},]|$)|(?:^|[ \t])#")
_COMMENT = re.compile(r"[ \t]#")
# An anchor or alias is a name of these characters; a tag ends at a blank (in flow context
# also at a flow indicator), a verbatim tag (!<...>) at its '>'.
_PROPERTY = re.compile(r"[&*][0-9A-Za-z_-]*|!<[^>]*>?|![^ \t]*")
_FLOW_PROPERTY = re.compile(r"[&*][0-9A-Za-z_-]*|!<[^>]*>?|![^ \t\[\]{},]*")
# What starts anything but a plain scalar in block context (or is a blank).
_BLOCK_SPECIAL = frozenset(" \t-?:#[{'\"|>&!*")
_DOUBLE_QUOTED_STOP = re.compile(r'[\\"]')
_BLOCK_SCALAR_INDENT = re.compile(r"[|>][-+]?([1-9])|[|>][1-9]?")

_JSON_DEPTH_STEP = [0] * 256
for _char, _step in ((b"[", 1), (b"{", 1), (b"]", -1), (b"}", -1)):
    _JSON_DEPTH_STEP[_char[0]] = _step
_JSON_OTHER_THAN_QUOTES_AND_BRACKETS = bytes(c for c in range(256) if c not in b'"[]{}')


def json_depth(data, limit=0):
    """Depth of the arrays and objects in JSON ``data`` (bytes or str), exact for valid JSON
    past ``limit``; when no more than ``limit`` brackets open at all, their count (no deeper).

    Escaped backslashes, then escaped quotes, are dropped, which leaves strings as "...";
    of the quotes and brackets only, two quotes side by side go too (a string without
    brackets, or two strings joined where nothing lay between them); the brackets between
    the quotes that remain are those outside strings."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    opening = data.count(b"[") + data.count(b"{")
    if opening <= limit:
        return opening
    marks = data.replace(b"\\\\", b"").replace(b'\\"', b"").translate(
        None, _JSON_OTHER_THAN_QUOTES_AND_BRACKETS).replace(b'""', b"")
    outside = b"".join(marks.split(b'"')[::2])
    return max(itertools.accumulate(map(_JSON_DEPTH_STEP.__getitem__, outside)), default=0)


class _YamlScan:
    """The state carried from line to line; see yaml_depth."""

    def __init__(self, limit):
        self.limit = limit
        self.deepest = 0
        self.indents = [-1]      # columns of the open block collections, as the scanner keeps them
        self.flow = 0            # open flow collections
        self.quote = None        # the quote of a quoted scalar going on to the next line
        self.plain = False       # a plain scalar ended the line and may go on (block context)
        self.flow_plain = False  # a plain scalar ended the line in flow context
        self.block_scalar = None  # [least indent, indent of its lines once known] while in one

    def deeper(self):
        """Called when a collection opens."""
        depth = len(self.indents) - 1 + self.flow
        if depth > self.deepest:
            self.deepest = depth

    def line(self, line):
        if line[:1] == "\ufeff" and self.quote is None and not self.flow_plain and not (
                self.plain and self.indents[-1] < 0):
            line = line[1:]  # skipped where a token may start a line (no column of its own)
        if self.block_scalar is not None and self.in_block_scalar(line):
            return
        pos = 0
        if self.quote is not None:
            pos = self.quoted_end(line, 0, self.quote)
            if pos < 0:
                return
            self.quote = None
        if self.flow:
            pos = self.flow_tokens(line, pos)
            if self.flow or pos < 0:
                return
        elif pos == 0:
            pos = self.line_start(line)
            if pos < 0:
                return
        self.block_tokens(line, pos, None)

    def in_block_scalar(self, line):
        """True while ``line`` belongs to the block scalar (blank or indented enough)."""
        text = line.lstrip(" ")
        if not text.strip():
            return True
        column = len(line) - len(text)
        least, indent = self.block_scalar
        if indent is None and column >= least:
            self.block_scalar[1] = column
            return True
        if indent is not None and column >= indent:
            return True
        self.block_scalar = None
        return False

    def line_start(self, line):
        """Where the tokens of a line in block context start; -1 when it has none."""
        text = line.lstrip(" ")
        if not text or text[0] == "\t" and not text.strip():
            return -1
        if text[0] == "#":
            self.plain = False  # a comment ends a plain scalar
            return -1
        column = len(line) - len(text)
        if column == 0 and text[:3] in ("---", "...") and text[3:4] in ("", " ", "\t"):
            self.indents = [-1]
            self.plain = False
            return 3
        if self.plain:
            if column > self.indents[-1]:
                # The plain scalar goes on, up to a comment.
                self.plain = _COMMENT.search(line, column) is None
                return -1
            self.plain = False
        if column == 0 and text[0] == "%":
            return -1  # a directive
        while self.indents[-1] > column:
            self.indents.pop()
        return column

    def block_tokens(self, line, pos, key):
        """The tokens of ``line`` from ``pos`` in block context; ``key`` is the column of a
        node that a ':' would make a key."""
        end = len(line)
        indents = self.indents
        while pos < end:
            char = line[pos]
            if char not in _BLOCK_SPECIAL:  # a plain scalar
                key = pos if key is None else key
                found = _BLOCK_PLAIN_END.search(line, pos + 1)
                if found is None:
                    self.plain = True
                    return
                if found.group() != ":":
                    return  # a comment
                pos = found.start()
                char = ":"
            if char in " \t":
                pos += 1
            elif char in "-?:" and (pos + 1 == end or line[pos + 1] in " \t"):
                # A block collection opens where an indicator or key stands right of the last.
                column = key if char == ":" and key is not None else pos
                if indents[-1] < column:
                    indents.append(column)
                    self.deeper()
                    if self.deepest > self.limit:
                        return
                key = None
                pos += 2
            elif char == "#":
                return
            elif char in "[{":
                key = pos if key is None else key
                self.flow = 1
                self.deeper()
                pos = self.flow_tokens(line, pos + 1)
                if self.flow or pos < 0:
                    return
            elif char in "'\"":
                key = pos if key is None else key
                pos = self.quoted_end(line, pos + 1, char)
                if pos < 0:
                    self.quote = char
                    return
            elif char in "|>":
                header = _BLOCK_SCALAR_INDENT.match(line, pos)
                top = indents[-1]
                if header.group(1):
                    self.block_scalar = [max(top, 0) + int(header.group(1))] * 2
                else:
                    self.block_scalar = [max(top + 1, 1), None]
                return
            elif char in "&!*":
                key = pos if key is None else key
                pos = _PROPERTY.match(line, pos).end()
            else:  # '-', '?' or ':' starting a plain scalar
                key = pos if key is None else key
                found = _BLOCK_PLAIN_END.search(line, pos + 1)
                if found is None:
                    self.plain = True
                    return
                if found.group() != ":":
                    return
                pos = found.start()

    def flow_tokens(self, line, pos):
        """The tokens of ``line`` from ``pos`` in flow context: where block context resumes
        (the last collection closed), or -1 when the line ends first."""
        end = len(line)
        in_plain = self.flow_plain
        while pos < end:
            if in_plain:
                found = _FLOW_PLAIN_END.search(line, pos)
                if found is None:
                    self.flow_plain = True
                    return -1
                if found.group()[-1] == "#":
                    self.flow_plain = False
                    return -1
                in_plain = False
                pos = found.start()
            char = line[pos]
            if char in " \t":
                pos += 1
            elif char in "[{":
                self.flow += 1
                self.deeper()
                if self.deepest > self.limit:
                    return -1
                pos += 1
            elif char in "]}":
                self.flow -= 1
                pos += 1
                if not self.flow:
                    self.flow_plain = False
                    return pos
            elif char == "#":
                break
            elif char in ",?:":
                pos += 1
            elif char in "'\"":
                pos = self.quoted_end(line, pos + 1, char)
                if pos < 0:
                    self.quote = char
                    break
            elif char in "&!*":
                pos = _FLOW_PROPERTY.match(line, pos).end()
            else:
                in_plain = True
        self.flow_plain = in_plain
        return -1

    @staticmethod
    def quoted_end(line, pos, quote):
        """Where the scalar quoted by ``quote`` ends after ``pos``; -1 past the line."""
        end = len(line)
        while pos < end:
            if quote == "'":
                found = line.find("'", pos)
                if found < 0:
                    return -1
                if line[found + 1:found + 2] == "'":
                    pos = found + 2
                    continue
                return found + 1
            found = _DOUBLE_QUOTED_STOP.search(line, pos)
            if found is None:
                return -1
            if found.group() == "\\":
                pos = found.start() + 2
                continue
            return found.start() + 1
        return -1


def yaml_depth(text, limit=_NEVER):
    """A lower bound of how deep the collections of a YAML stream nest (the deepest of its
    documents), found without a parser; exact for nested brackets. Stops past ``limit``."""
    scan = _YamlScan(limit)
    if text[:1] == "\ufeff":
        text = text[1:]  # the byte order mark of the stream (the reader's)
    for line in text.splitlines():
        scan.line(line)
        if scan.deepest > limit:
            break
    return scan.deepest
