package zk

// CheckRoot checks the form of a root path (Config.Root) as Open does,
// without connecting: an absolute node path such as /baton, not / itself,
// without a trailing slash, each of its names one ZooKeeper allows. A
// command line checks a flag with it before anything connects; the error
// names the root ("zk: root "x": ...").
func CheckRoot(root string) error { return checkRootPath(root) }
