package fleet

// version is the fleet module's, the instrumentation version of its meter;
// the release check holds it to the version released.
const version = "1.0.0-rc.1"
