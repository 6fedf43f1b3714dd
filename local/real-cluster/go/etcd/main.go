// Command etcd runs a single-member etcd for the test control plane: loopback only, data in the
// directory it is given, ready when it prints "etcd ready". It stops on SIGINT or SIGTERM.
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	dataDir := flag.String("data-dir", "", "directory for etcd's data (required)")
	clientPort := flag.Int("client-port", 2379, "loopback port for clients")
	peerPort := flag.Int("peer-port", 2380, "loopback port for the (single) peer")
	flag.Parse()
	if *dataDir == "" {
		fmt.Fprintln(os.Stderr, "etcd: --data-dir is required")
		os.Exit(2)
	}

	cfg := embed.NewConfig()
	cfg.Dir = *dataDir
	cfg.Name = "ome-test"
	cfg.LogLevel = "error"
	client := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", *clientPort)}
	peer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", *peerPort)}
	cfg.ListenClientUrls = []url.URL{client}
	cfg.AdvertiseClientUrls = []url.URL{client}
	cfg.ListenPeerUrls = []url.URL{peer}
	cfg.AdvertisePeerUrls = []url.URL{peer}
	cfg.InitialCluster = fmt.Sprintf("%s=%s", cfg.Name, peer.String())
	// Tests create and drop a cluster per suite: no fsync wait, no snapshots worth keeping.
	cfg.UnsafeNoFsync = true

	server, err := embed.StartEtcd(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcd: start: %v\n", err)
		os.Exit(1)
	}
	select {
	case <-server.Server.ReadyNotify():
		fmt.Println("etcd ready")
	case <-time.After(60 * time.Second):
		server.Close()
		fmt.Fprintln(os.Stderr, "etcd: not ready after 60s")
		os.Exit(1)
	}

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-signals:
	case err := <-server.Err():
		fmt.Fprintf(os.Stderr, "etcd: %v\n", err)
	}
	server.Close()
}
