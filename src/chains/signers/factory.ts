// Builds each chain's treasury signer from configuration: the key from the environment, or the key in the PKCS#11
// token. pkcs11js (a native addon) is loaded only when a pkcs11 signer is configured. A problem an operator has to
// fix (a wrong label, PIN or library) stops start-up as a ConfigError naming the variable.
import type { Logger } from 'pino';
import { ConfigError, type Config, type Pkcs11Settings } from '../../config.js';
import { createEthereumKeySigner, createSolanaKeySigner } from './key.js';
import { SignerError, type EthereumSigner, type SolanaSigner } from './port.js';

export async function createEthereumSigner(config: Config, log: Logger): Promise<EthereumSigner> {
  if (config.ethereum.signer === 'key') return createEthereumKeySigner(config.ethereum.treasuryKey!);
  const { openPkcs11EthereumSigner } = await import('./pkcs11/ethereum.js');
  const keyLabel = config.ethereum.pkcs11KeyLabel!;
  const signer = await asConfigError(() => openPkcs11EthereumSigner({ ...tokenOptions(config.pkcs11!, log), keyLabel }));
  log.info({ chain: 'ethereum', token: config.pkcs11!.tokenLabel, keyLabel, address: signer.address }, 'treasury key in the PKCS#11 token');
  return signer;
}

export async function createSolanaSigner(config: Config, log: Logger): Promise<SolanaSigner> {
  if (config.solana.signer === 'key') return createSolanaKeySigner(config.solana.treasuryKey!);
  const { openPkcs11SolanaSigner } = await import('./pkcs11/solana.js');
  const keyLabel = config.solana.pkcs11KeyLabel!;
  const signer = await asConfigError(() => openPkcs11SolanaSigner({ ...tokenOptions(config.pkcs11!, log), keyLabel }));
  log.info({ chain: 'solana', token: config.pkcs11!.tokenLabel, keyLabel, address: signer.address }, 'treasury key in the PKCS#11 token');
  return signer;
}

function tokenOptions(settings: Pkcs11Settings, log: Logger) {
  return {
    modulePath: settings.module,
    tokenLabel: settings.tokenLabel,
    pin: settings.pin,
    timeoutSeconds: settings.timeoutSeconds,
    logger: log.child({ component: 'pkcs11' }),
  };
}

async function asConfigError<T>(open: () => Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (error) {
    if (error instanceof SignerError && error.setting) {
      throw new ConfigError(error.setting, error.details ? `${error.shortMessage} (${error.details})` : error.shortMessage);
    }
    throw error;
  }
}
