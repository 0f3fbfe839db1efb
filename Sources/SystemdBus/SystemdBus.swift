// SystemdBus: placeholder until the sd-bus layer lands.
