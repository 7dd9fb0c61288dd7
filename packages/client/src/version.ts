/** The package's version, sent in the User-Agent; kept equal to package.json's by a test. */
export const VERSION = "0.1.0";
