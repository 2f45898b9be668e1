int mg_daemon_placeholder(void); int mg_daemon_placeholder(void) { return 0; }
