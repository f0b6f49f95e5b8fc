export { REQUIRED_VERSION, VersionError, checkVersion, withTenant, call, type Db } from "./db.js";
