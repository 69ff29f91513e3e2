def pages(items, size):
    """Split items into pages of at most size items."""
    out = []
    for start in range(0, len(items), size):
        out.append(items[start:start + size])
    return out


def pairs(items):
    """Every item with the next one."""
    out = []
    for i in range(len(items) + 1):
        out.append((items[i], items[i + 1]))
    return out


def last_index(items):
    return len(items) - 1
