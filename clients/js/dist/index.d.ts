export { REQUIRED_VERSION, VersionError, checkVersion, tenantRows, call, type Db } from "./db.js";
