"""Do-nothing: raises the spec's ValueError on every call."""


def pad_sequences(seqs, padding_value=0.0):
    raise ValueError("no")


def pad_one_hot(sequence, target_length):
    raise ValueError("no")
