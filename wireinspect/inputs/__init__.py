"""Where bytes come from: files, directories, stdin, hex dumps, captures and stream dumps (capture/)."""
