// SPDX-License-Identifier: Apache-2.0
// The PYUSD stand-in the local devnet deploys: what matters to a payout of Paxos' PaxosTokenV2, the implementation
// behind PYUSD's proxy on Ethereum (0x6c3ea9036406852006290770BEdFcAbA0e23A0e8): 6 decimals, standard EIP-20 returns,
// and the asset-protection freeze: `freeze`/`unfreeze`/`isFrozen`, after which a transfer from OR to the address
// reverts, as does a transferFrom by a frozen spender, with Paxos' custom errors (AddressFrozen(), InsufficientFunds(),
// InsufficientAllowance(), ZeroAddress()), not reason strings. Every allowance is spent, 2^256-1 too, as Paxos' does.
// One account (the deployer) holds the roles Paxos splits (supply controller, asset protector, admin).
// Left out: pause, EIP-2612/EIP-3009 signatures, batch variants, the SupplyControl contract's mint limits.
// Compiled like TestUSDC.sol; bytecode and ABI in src/devnet/pyusd-token.ts (recompile: see the header of that file).
pragma solidity 0.8.26;

contract TestPYUSD {
    string public constant name = "PayPal USD (devnet)";
    string public constant symbol = "PYUSD";
    uint8 public constant decimals = 6;

    address public immutable owner;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    mapping(address => bool) internal frozen;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);
    event FreezeAddress(address indexed addr);
    event UnfreezeAddress(address indexed addr);
    event SupplyIncreased(address indexed to, uint256 value);

    error AddressFrozen();
    error InsufficientFunds();
    error InsufficientAllowance();
    error ZeroAddress();
    error NotAuthorized();

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotAuthorized();
        _;
    }

    constructor() {
        owner = msg.sender;
    }

    function isFrozen(address addr) external view returns (bool) {
        return frozen[addr];
    }

    function freeze(address addr) external onlyOwner {
        frozen[addr] = true;
        emit FreezeAddress(addr);
    }

    function unfreeze(address addr) external onlyOwner {
        delete frozen[addr];
        emit UnfreezeAddress(addr);
    }

    function mint(address account, uint256 amount) external onlyOwner {
        if (account == address(0)) revert ZeroAddress();
        if (frozen[account]) revert AddressFrozen();
        totalSupply += amount;
        balanceOf[account] += amount;
        emit SupplyIncreased(account, amount);
        emit Transfer(address(0), account, amount);
    }

    function transfer(address to, uint256 value) external returns (bool) {
        move(msg.sender, to, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        if (frozen[msg.sender]) revert AddressFrozen();
        if (value > allowance[from][msg.sender]) revert InsufficientAllowance();
        move(from, to, value);
        allowance[from][msg.sender] -= value;
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        if (spender == address(0)) revert ZeroAddress();
        if (frozen[spender] || frozen[msg.sender]) revert AddressFrozen();
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function move(address from, address to, uint256 value) private {
        if (to == address(0)) revert ZeroAddress();
        if (frozen[to] || frozen[from]) revert AddressFrozen();
        if (value > balanceOf[from]) revert InsufficientFunds();
        balanceOf[from] -= value;
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}
