/** The database file inside data_dir. */
export const DB_FILE = 'rigd.sqlite';
