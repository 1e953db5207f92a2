// HubBindings
