"""Do-nothing: returns the chunks it was given (copies) with an empty log; ring_allreduce_dist
sends nothing and returns t as it came."""


def ring_allreduce(chunks):
    return [[c.clone() for c in rank] for rank in chunks], []


def ring_allreduce_dist(t, send, recv, rank, world_size):
    return t
