int mg_launcher_placeholder(void); int mg_launcher_placeholder(void) { return 0; }
