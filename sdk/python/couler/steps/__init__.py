"""Step libraries: distributed training jobs (TensorFlow, PyTorch, MPI) and Katib tuning."""
