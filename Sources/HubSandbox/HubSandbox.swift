// HubSandbox
