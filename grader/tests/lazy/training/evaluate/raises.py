"""Do-nothing: raises the spec's exception (ValueError) on every call."""


def predict(model, batches):
    raise ValueError("no batch to predict")


def evaluate(model, batches, loss_name):
    raise ValueError("no batch to evaluate")
