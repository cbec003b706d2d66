"""The vocabulary of a read: a list request's query (filter, sort, page), the properties lists
are filtered and sorted by, label and field selectors, the reads a summary asks for, and the
pure selection of a page. Pure: no I/O, no Tornado."""
