/**
 * kube-controller-manager (DaemonSet, node lifecycle and taint-eviction controllers, the
 * kube-root-ca.crt ConfigMaps projected tokens need) and kube-scheduler, both from the same build as
 * kube-apiserver, each with the user kubeadm gives it, serving only on 127.0.0.1.
 */
import * as path from 'node:path';
import { freePorts, ManagedProcess, readTail, sleep } from '../../e2e/harness/processes.ts';

export interface ControllerSettings {
  workDir: string;
  controllerManager: string;
  scheduler: string;
  controllerManagerKubeconfig: string;
  schedulerKubeconfig: string;
  caFile: string;
  saKey: string;
}

export class Controllers {
  private procs: ManagedProcess[] = [];
  private readonly s: ControllerSettings;
  constructor(s: ControllerSettings) {
    this.s = s;
  }

  async start(): Promise<void> {
    const [cmPort, schedPort] = (await freePorts(2)) as [number, number];
    const { s } = this;
    this.procs.push(
      new ManagedProcess(
        'kube-controller-manager',
        [
          s.controllerManager,
          `--kubeconfig=${s.controllerManagerKubeconfig}`,
          '--leader-elect=false',
          `--root-ca-file=${s.caFile}`,
          `--service-account-private-key-file=${s.saKey}`,
          '--use-service-account-credentials=true',
          '--bind-address=127.0.0.1',
          `--secure-port=${cmPort}`,
          '--v=2',
        ],
        path.join(s.workDir, 'kube-controller-manager.log'),
      ),
      new ManagedProcess(
        'kube-scheduler',
        [
          s.scheduler,
          `--kubeconfig=${s.schedulerKubeconfig}`,
          '--leader-elect=false',
          '--bind-address=127.0.0.1',
          `--secure-port=${schedPort}`,
        ],
        path.join(s.workDir, 'kube-scheduler.log'),
      ),
    );
    await sleep(500);
    for (const p of this.procs) {
      if (p.exited) throw new Error(`${p.name} exited (${p.describeExit()}):\n${readTail(p.logFile, 30)}`);
    }
  }

  async stop(): Promise<void> {
    for (const p of this.procs) await p.stop();
  }
}
