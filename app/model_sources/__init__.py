"""Where the model comes from: the model manager's command line and its downloads, the hub token and a team
server's key in the system keyring, and the GPU build of torch that installed copies add in the user's folder."""
