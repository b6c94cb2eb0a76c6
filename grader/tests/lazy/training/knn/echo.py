"""Do-nothing: returns the training labels."""


def knn_predict(train_x, train_y, queries, k):
    return train_y
