// AppLifecycleSystemd: placeholder until the host bridge lands.
